# varmail: a mail server storing one message per file in a single flat
# directory (/var/mail style). Each thread deletes a message, delivers a new
# one (create, append, fsync), then reads two messages, appending to and
# fsyncing the first: one read per write, one fsync per append.
#
#   $dir            where the fileset directory is created
#   $nfiles         message files (80% exist at the start)
#   $meandirwidth   mean entries per directory; 1000000 keeps it flat
#   $filesize       bytes per file, drawn once per file: gamma, mean 16 KiB,
#                   shape 1.5
#   $nthreads       worker threads
#   $iosize         bytes per read() inside a whole-file read
#   $meanappendsize appendfilerand writes uniform [0, this) bytes
#   $runtime        measured seconds

set $dir=/tmp
set $nfiles=1000
set $meandirwidth=1000000
set $filesize=cvar(type=cvar-gamma,parameters=mean:16384;gamma:1.5)
set $nthreads=16
set $iosize=1m
set $meanappendsize=16k
set $runtime=60

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=80

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop deletefile name=deletefile1,filesetname=bigfileset
    flowop createfile name=createfile2,filesetname=bigfileset,fd=1
    flowop appendfilerand name=appendfilerand2,iosize=$meanappendsize,fd=1
    flowop fsync name=fsyncfile2,fd=1
    flowop closefile name=closefile2,fd=1
    flowop openfile name=openfile3,filesetname=bigfileset,fd=1
    flowop readwholefile name=readfile3,fd=1,iosize=$iosize
    flowop appendfilerand name=appendfilerand3,iosize=$meanappendsize,fd=1
    flowop fsync name=fsyncfile3,fd=1
    flowop closefile name=closefile3,fd=1
    flowop openfile name=openfile4,filesetname=bigfileset,fd=1
    flowop readwholefile name=readfile4,fd=1,iosize=$iosize
    flowop closefile name=closefile4,fd=1
  }
}

run $runtime
