# filemicro_createfiles: create files in a half-populated flat fileset and
# write each whole. finishoncount counts every I/O operation of the process
# (create, write, close), so $count=15000 means 5000 new files.
#
#   $dir           where the fileset directory is created
#   $count         I/O operations before the run ends
#   $filesize      bytes written to each file (fixed)
#   $iosize        bytes per write() inside the whole-file write
#   $meandirwidth  mean entries per directory; 100000 keeps it flat
#   $nfiles        entries in the fileset (half exist at the start)
#   $nthreads      creating threads
#
# The stock file sets no quit mode; fsbench's says firstdone so that the
# finishoncount limit ends the run.

set $dir=/tmp
set $count=15000
set $filesize=1k
set $iosize=1m
set $meandirwidth=100000
set $nfiles=20000
set $nthreads=1

set mode quit firstdone

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=50

define process name=filecreate,instances=1
{
  thread name=filecreatethread,memsize=10m,instances=$nthreads
  {
    flowop createfile name=createfile1,filesetname=bigfileset,fd=1
    flowop writewholefile name=writefile1,filesetname=bigfileset,fd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
    flowop finishoncount name=finish,value=$count
  }
}
