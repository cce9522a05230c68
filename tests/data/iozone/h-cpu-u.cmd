iozone -+u -s 1m -r 64k -i 0 -i 1 -f /dev/shm/iozone-samples/iozone.tmp
