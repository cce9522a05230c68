iozone -a -z -n 16m -g 32m -i 0 -R -f /dev/shm/iozone-samples/iozone.tmp
