iozone -i 99 -f /dev/shm/iozone-samples/iozone.tmp
