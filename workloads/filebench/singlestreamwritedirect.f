# singlestreamwritedirect: one thread writes one file sequentially
# with O_DIRECT (no page cache). The file starts at 1 KiB and grows for as long
# as the run lasts (sequential writes never wrap), so the space needed is
# the write rate times the run time.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir       where the file is created
#   $iosize    bytes per write
#   $nthreads  writer threads (each with its own file offset)

set $dir=/tmp
set $iosize=1m
set $nthreads=1

define file name=largefile1,path=$dir,prealloc

define process name=seqwrite,instances=1
{
  thread name=seqwrite,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite,filename=largefile1,iosize=$iosize,directio
  }
}
