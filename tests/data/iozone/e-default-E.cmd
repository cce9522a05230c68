iozone -E -s 1m -r 64k -f /dev/shm/iozone-samples/iozone.tmp
