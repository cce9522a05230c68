# randomwrite: random overwrites of one large file.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir         where the file is created
#   $filesize    bytes of the file (created before the run)
#   $iosize      bytes per write, at offsets aligned to it
#   $nthreads    writer threads
#   $workingset  bytes at the start of the file the offsets cover (0 = all)
#   $directio    open with O_DIRECT (true/false)

set $dir=/tmp
set $filesize=5g
set $iosize=8k
set $nthreads=1
set $workingset=0
set $directio=false

define file name=largefile1,path=$dir,size=$filesize,prealloc,reuse,paralloc

define process name=rand-write,instances=1
{
  thread name=rand-thread,memsize=5m,instances=$nthreads
  {
    flowop write name=rand-write1,filename=largefile1,iosize=$iosize,random,workingset=$workingset,directio=$directio
  }
}
