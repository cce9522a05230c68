iozone -O -s 1m -r 64k -i 0 -i 1 -i 2 -f /dev/shm/iozone-samples/iozone.tmp
