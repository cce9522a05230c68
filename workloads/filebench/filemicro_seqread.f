# filemicro_seqread: one thread reads one large file sequentially,
# starting over at the end.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir       where the file is created
#   $filesize  bytes of the file (created before the run)
#   $iosize    bytes per read
#   $nthreads  reading threads
#
# The stock file is 1.4 syntax (cached=false); that attribute is dropped.

set $dir=/tmp
set $filesize=1g
set $iosize=1m
set $nthreads=1

define file name=largefile,path=$dir,size=$filesize,prealloc,reuse

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop read name=seqread-file,filename=largefile,iosize=$iosize
  }
}
