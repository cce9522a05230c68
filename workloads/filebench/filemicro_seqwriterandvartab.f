# filemicro_seqwriterandvartab: each thread appends $count writes to its own
# file, sizes drawn per write from a table: 80% in 1-4 KiB, 15% in
# 4-16 KiB, 5% in 16-64 KiB. A single loop, then stop.
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
set $iosize = randvar(type=tabular, min=1k, randtable={{80, 1k, 4k}, {15, 4k, 16k}, {5, 16k, 64k}})

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
