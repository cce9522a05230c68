iozone -E -s 1m -r 64k -i 0 -i 9 -i 10 -i 11 -i 12 -f /dev/shm/iozone-samples/iozone.tmp
