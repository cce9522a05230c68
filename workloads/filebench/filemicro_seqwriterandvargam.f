# filemicro_seqwriterandvargam: each thread appends $count writes to its own
# file, sizes drawn per write from a gamma distribution (at least 1 KiB,
# mean 5.5 KiB, shape 1.5), in a single loop, then stop.
#
#   $dir       where the fileset directory is created
#   $nthreads  appending threads, one file each
#   $sync      open the files with O_SYNC (true/false)
#   $count     appends per thread
#   $iosize    bytes per append (a random variable)
#
# The stock file is 1.4 syntax (define randvar, cached=false): the randvar
# is a 1.5 `set ... randvar()`, cached is dropped, dsync moves to the
# openfile where it takes effect, and the quit mode is firstdone.

set $dir=/tmp
set $nthreads=1
set $sync=false
set $count=128k
set $iosize = randvar(type=gamma, min=1k, mean=5632, gamma=1500)

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=0,entries=$nthreads,dirwidth=1024,prealloc=100

define process name=filewriter,instances=1
{
  thread name=filewriterthread,memsize=10m,instances=$nthreads
  {
    flowop openfile name=open-file,filesetname=bigfileset,dsync=$sync,fd=1
    flowop appendfile name=write-file,iosize=$iosize,fd=1,iters=$count
    flowop closefile name=close,fd=1
    flowop finishoncount name=finish,value=1
  }
}
