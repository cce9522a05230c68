iozone -a -n 16m -g 64m -i 0 -R -f /dev/shm/iozone-samples/iozone.tmp
