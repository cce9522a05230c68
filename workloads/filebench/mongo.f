# mongo: a document store keeping one document per file: append to a
# document, read it back whole, and drop a document from a second set; the
# run ends when the second set has been emptied.
#
#   $dir         where the filesets are created
#   $nfiles      documents in each of the two sets (all exist at the start)
#   $dirwidth    mean entries per directory
#   $filesize    bytes per document at the start (fixed)
#   $nthreads    worker threads
#   $meaniosize  appendfilerand writes uniform [0, this) bytes
#   $readiosize  bytes per read() inside the whole-file read

set $dir=/tmp
set $nfiles=1000
set $dirwidth=20
set $filesize=16k
set $nthreads=1
set $meaniosize=16k
set $readiosize=1m

set mode quit firstdone

define fileset name=postset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$dirwidth,prealloc,paralloc
define fileset name=postsetdel,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$dirwidth,prealloc,paralloc

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop openfile name=openfile1,filesetname=postset,fd=1
    flowop appendfilerand name=appendfilerand1,iosize=$meaniosize,fd=1
    flowop closefile name=closefile1,fd=1
    flowop openfile name=openfile2,filesetname=postset,fd=1
    flowop readwholefile name=readfile1,fd=1,iosize=$readiosize
    flowop closefile name=closefile2,fd=1
    flowop deletefile name=deletefile1,filesetname=postsetdel
  }
}
