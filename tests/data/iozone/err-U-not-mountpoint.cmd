iozone -U /dev/shm/iozone-samples/notmnt -f /dev/shm/iozone-samples/iozone.tmp
