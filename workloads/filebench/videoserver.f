# videoserver: a video-on-demand server. Reader threads stream the active
# videos sequentially, throttled together to $eventrate MiB/s; one writer
# replaces a passive video every $repintval seconds (delete, create, write
# whole). No run line: fsbench runs 60 s unless told --runtime.
#
#   $dir            where the filesets are created
#   $eventrate      MiB/s shared by all readers (bwlimit takes one event per MiB)
#   $filesize       bytes per video
#   $nthreads       reader threads
#   $numactivevids  videos being served (all exist at the start)
#   $numpassivevids videos on the shelf (half exist at the start)
#   $reuseit        keep matching files from an earlier run (true/false)
#   $readiosize     bytes per streaming read
#   $writeiosize    bytes per write() while writing a new video
#   $repintval      seconds between replaced videos

set $dir=/tmp
set $eventrate=96
set $filesize=10g
set $nthreads=48
set $numactivevids=32
set $numpassivevids=194
set $reuseit=false
set $readiosize=256k
set $writeiosize=1m
set $repintval=10

eventgen rate=$eventrate

define fileset name=activevids,path=$dir,size=$filesize,entries=$numactivevids,dirwidth=4,prealloc,paralloc,reuse=$reuseit
define fileset name=passivevids,path=$dir,size=$filesize,entries=$numpassivevids,dirwidth=20,prealloc=50,paralloc,reuse=$reuseit

define process name=vidwriter,instances=1
{
  thread name=vidwriter,memsize=10m,instances=1
  {
    flowop deletefile name=vidremover,filesetname=passivevids
    flowop createfile name=wrtopen,filesetname=passivevids,fd=1
    flowop writewholefile name=newvid,iosize=$writeiosize,fd=1,srcfd=1
    flowop closefile name=wrtclose,fd=1
    flowop delay name=replaceinterval,value=$repintval
  }
}

define process name=vidreaders,instances=1
{
  thread name=vidreaders,memsize=10m,instances=$nthreads
  {
    flowop read name=vidreader,filesetname=activevids,iosize=$readiosize
    flowop bwlimit name=serverlimit,target=vidreader
  }
}
