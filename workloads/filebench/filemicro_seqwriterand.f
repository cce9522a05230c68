# filemicro_seqwriterand: grow one file with $count appends of random size
# (uniform below $iosize, so 4 KiB on average) in a single loop, then stop.
#
#   $dir       where the file is created
#   $count     appends
#   $iosize    appends are uniform [0, this) bytes
#   $nthreads  appending threads
#   $sync      open the file with O_SYNC (true/false)
#
# The stock file is 1.4 syntax (cached=false) and puts dsync on the append,
# after the file is already open; here it sits on the openfile, where an
# open flag takes effect, and the quit mode is firstdone.

set $dir=/tmp
set $count=128k
set $iosize=8k
set $nthreads=1
set $sync=false

set mode quit firstdone

define file name=bigfile,path=$dir,size=0,prealloc

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop openfile name=open-file,filename=bigfile,dsync=$sync,fd=1
    flowop appendfilerand name=appendrand-file,iosize=$iosize,fd=1,iters=$count
    flowop closefile name=close,fd=1
    flowop finishoncount name=finish,value=1
  }
}
