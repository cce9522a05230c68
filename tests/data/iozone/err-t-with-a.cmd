iozone -t 2 -a -f /dev/shm/iozone-samples/iozone.tmp
