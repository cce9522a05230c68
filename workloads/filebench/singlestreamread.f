# singlestreamread: one thread reads one large file sequentially
# through the page cache, starting over at the end of the file.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir       where the file is created
#   $filesize  bytes of the file (created before the run)
#   $nthreads  reader threads (each with its own file offset)
#   $iosize    bytes per read

set $dir=/tmp
set $filesize=5g
set $nthreads=1
set $iosize=1m

define file name=largefile1,path=$dir,size=$filesize,prealloc,reuse

define process name=seqread,instances=1
{
  thread name=seqread,memsize=10m,instances=$nthreads
  {
    flowop read name=seqread,filename=largefile1,iosize=$iosize
  }
}
