# randomrw: one large file read and written at random offsets at the same
# time, by $nthreads reader threads and $nthreads writer threads.
# No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir         where the file is created
#   $filesize    bytes of the file (created before the run)
#   $iosize      bytes per read and per write, at offsets aligned to it
#   $nthreads    reader threads, and as many writer threads
#   $workingset  bytes at the start of the file the offsets cover (0 = all)
#   $directio    open with O_DIRECT (true/false)

set $dir=/tmp
set $filesize=5g
set $iosize=8k
set $nthreads=1
set $workingset=0
set $directio=false

define file name=largefile1,path=$dir,size=$filesize,prealloc,reuse,paralloc

define process name=rand-rw,instances=1
{
  thread name=rand-r-thread,memsize=5m,instances=$nthreads
  {
    flowop read name=rand-read1,filename=largefile1,iosize=$iosize,random,workingset=$workingset,directio=$directio
  }
  thread name=rand-w-thread,memsize=5m,instances=$nthreads
  {
    flowop write name=rand-write1,filename=largefile1,iosize=$iosize,random,workingset=$workingset,directio=$directio
  }
}
