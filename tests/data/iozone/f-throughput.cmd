iozone -t 2 -s 1m -r 64k -i 0 -i 1
