# fivestreamwritedirect: five threads each write their own file
# sequentially with O_DIRECT (no page cache): they overwrite the $filesize
# written before the run, then extend the file for as long as the run lasts.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir       where the files are created
#   $filesize  bytes of each of the five files before the run
#   $nthreads  writer threads per file
#   $iosize    bytes per write

set $dir=/tmp
set $filesize=1g
set $nthreads=1
set $iosize=1m

define file name=largefile1,path=$dir,size=$filesize,prealloc,reuse
define file name=largefile2,path=$dir,size=$filesize,prealloc,reuse
define file name=largefile3,path=$dir,size=$filesize,prealloc,reuse
define file name=largefile4,path=$dir,size=$filesize,prealloc,reuse
define file name=largefile5,path=$dir,size=$filesize,prealloc,reuse

define process name=seqwrite,instances=1
{
  thread name=seqwrite1,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite1,filename=largefile1,iosize=$iosize,directio
  }
  thread name=seqwrite2,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite2,filename=largefile2,iosize=$iosize,directio
  }
  thread name=seqwrite3,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite3,filename=largefile3,iosize=$iosize,directio
  }
  thread name=seqwrite4,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite4,filename=largefile4,iosize=$iosize,directio
  }
  thread name=seqwrite5,memsize=10m,instances=$nthreads
  {
    flowop write name=seqwrite5,filename=largefile5,iosize=$iosize,directio
  }
}
