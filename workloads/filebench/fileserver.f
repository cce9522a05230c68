# fileserver: a file server under many clients (SPECsfs-like mix). Each
# thread creates a file and writes it whole, appends to another, reads a
# third whole, then deletes one and stats one: one read for every two
# writes, and as many metadata operations as data operations.
#
#   $dir            where the fileset directory is created
#   $nfiles         files in the fileset (80% exist at the start)
#   $meandirwidth   mean entries per directory (depth ~ ln(nfiles)/ln(width))
#   $filesize       bytes per file, drawn once per file: gamma, mean 128 KiB,
#                   shape 1.5
#   $nthreads       worker threads
#   $iosize         bytes per read()/write() inside a whole-file operation
#   $meanappendsize appendfilerand writes uniform [0, this) bytes, so the
#                   mean append is half of it
#   $runtime        measured seconds

set $dir=/tmp
set $nfiles=10000
set $meandirwidth=20
set $filesize=cvar(type=cvar-gamma,parameters=mean:131072;gamma:1.5)
set $nthreads=50
set $iosize=1m
set $meanappendsize=16k
set $runtime=60

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=80

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop createfile name=createfile1,filesetname=bigfileset,fd=1
    flowop writewholefile name=wrtfile1,srcfd=1,fd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
    flowop openfile name=openfile1,filesetname=bigfileset,fd=1
    flowop appendfilerand name=appendfilerand1,iosize=$meanappendsize,fd=1
    flowop closefile name=closefile2,fd=1
    flowop openfile name=openfile2,filesetname=bigfileset,fd=1
    flowop readwholefile name=readfile1,fd=1,iosize=$iosize
    flowop closefile name=closefile3,fd=1
    flowop deletefile name=deletefile1,filesetname=bigfileset
    flowop statfile name=statfile1,filesetname=bigfileset
  }
}

run $runtime
