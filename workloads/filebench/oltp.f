# oltp: a database in the style of an Oracle OLTP server. 200 shadow
# processes do small random reads of the data files and burn CPU between
# them; 10 database writers push random asynchronous synchronous writes of
# the data files; one log writer appends large writes to the redo log. The
# shadows wake the writers through semaphores, so the writers run at the
# pace the readers set.
#
#   $dir          where the filesets are created
#   $eventrate    events per second for the shadows' eventlimit (0 = no limit)
#   $iosize       bytes per data-file read and write
#   $logiosize    bytes per log write
#   $nshadows     shadow (reader) processes, one thread each
#   $ndbwriters   database-writer processes, one thread each
#   $usermode     CPU loop iterations per shadow transaction
#   $filesize     bytes per data file
#   $memperthread bytes of per-thread I/O buffer
#   $workingset   bytes of each file the random offsets cover (0 = all)
#   $logfilesize  bytes of the log file
#   $nfiles       data files
#   $nlogfiles    log files
#   $directio     open the files with O_DIRECT (true/false)
#   $runtime      measured seconds

set $dir=/tmp
set $eventrate=0
set $iosize=2k
set $logiosize=256k
set $nshadows=200
set $ndbwriters=10
set $usermode=200000
set $filesize=10m
set $memperthread=1m
set $workingset=0
set $logfilesize=10m
set $nfiles=10
set $nlogfiles=1
set $directio=false
set $runtime=60

eventgen rate=$eventrate

define fileset name=datafiles,path=$dir,size=$filesize,entries=$nfiles,dirwidth=1024,prealloc=100,reuse
define fileset name=logfile,path=$dir,size=$logfilesize,entries=$nlogfiles,dirwidth=1024,prealloc=100,reuse

# Log writer: one log write, wait for it, then sleep until shadows have
# posted enough commits.
define process name=lgwr,instances=1
{
  thread name=lgwr,memsize=$memperthread,useism
  {
    flowop aiowrite name=lg-write,filesetname=logfile,iosize=$logiosize,random,directio=$directio,dsync
    flowop aiowait name=lg-aiowait
    flowop semblock name=lg-block,value=3200,highwater=1000
  }
}

# Database writers: 100 random writes spread over the data files, some CPU,
# wait for the shadows, then reap the writes.
define process name=dbwr,instances=$ndbwriters
{
  thread name=dbwr,memsize=$memperthread,useism
  {
    flowop aiowrite name=dbwrite-a,filesetname=datafiles,iosize=$iosize,workingset=$workingset,random,iters=100,opennext,directio=$directio,dsync
    flowop hog name=dbwr-hog,value=10000
    flowop semblock name=dbwr-block,value=1000,highwater=2000
    flowop aiowait name=dbwr-aiowait
  }
}

# Shadows: one random read, CPU work, then a commit posted to both writers.
define process name=shadow,instances=$nshadows
{
  thread name=shadow,memsize=$memperthread,useism
  {
    flowop read name=shadowread,filesetname=datafiles,iosize=$iosize,workingset=$workingset,random,opennext,directio=$directio
    flowop hog name=shadowhog,value=$usermode
    flowop sempost name=shadow-post-lg,value=1,target=lg-block,blocking
    flowop sempost name=shadow-post-dbwr,value=1,target=dbwr-block,blocking
    flowop eventlimit name=random-rate
  }
}

run $runtime
