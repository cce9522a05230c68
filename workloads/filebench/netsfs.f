# netsfs: a network file server's clients, modelled on measured NFS traces.
# Each thread repeatedly launches an application (reads three files whole),
# does six read-modify-write cycles (read a file whole, write a new file of
# the same size, delete one), three appends and a stat, paced by
# $eventrate loops per second. File and I/O sizes follow the tables below.
#
#   $dir           where the fileset directory is created
#   $eventrate     loops per second over all threads (0 = no pacing)
#   $meandirwidth  mean entries per directory
#   $nthreads      client threads
#   $nfiles        files in the fileset (60% exist at the start)
#   $wrtiosize     bytes per write() and per append, from the table
#   $rdiosize      bytes per read(), from the table
#   $filesize      bytes per file, drawn once per file from the table
#   $fileidx       which file an operation picks (value mod $nfiles)
#   $runtime       measured seconds

set $dir=/tmp
set $eventrate=10
set $meandirwidth=20
set $nthreads=1
set $nfiles=100000
set $runtime=60

eventgen rate=$eventrate

# Tables: {percent of samples, lowest, highest}; a sample picks a row by its
# percent, then a uniform value in the row's range, rounded to 1 KiB.
set $wrtiosize = randvar(type=tabular, min=1k, round=1k, randtable={
  { 0,   1k,   7k}, {50,   9k,  15k}, {14,  17k,  23k},
  {14,  33k,  39k}, {12,  65k,  71k}, {10, 129k, 135k}})

set $rdiosize = randvar(type=tabular, min=8k, round=1k, randtable={
  {85,   8k,   8k}, { 8,  17k,  23k}, { 4,  33k,  39k},
  { 2,  65k,  71k}, { 1, 129k, 135k}})

set $filesize = randvar(type=tabular, min=1k, round=1k, randtable={
  {33,   1k,   1k}, {21,   1k,   3k}, {13,   3k,   5k}, {10,   5k,  11k},
  { 8,  11k,  21k}, { 5,  21k,  43k}, { 4,  43k,  85k}, { 3,  85k, 171k},
  { 2, 171k, 341k}, { 1, 341k, 1707k}})

# A skewed popularity: gamma with shape 0.1, so most picks land on a few
# files and the rest spread over the whole set. The stock netsfs.f gives no
# mean here, so Filebench's default (0.1) sends almost every pick to file 0;
# an explicit mean of half the stock file count spreads them as intended.
set $fileidx = randvar(type=gamma, min=0, mean=50000, gamma=100)

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=60

# Read a file whole, write a new file of the same size, delete a file.
# (The stock file means the old one, but fd 1 is already closed by then, so
# the delete takes the next existing file instead.)
define flowop name=rmw
{
  flowop openfile name=openfile1,filesetname=bigfileset,indexed=$fileidx,fd=1
  flowop readwholefile name=readfile1,iosize=$rdiosize,fd=1
  flowop createfile name=newfile2,filesetname=bigfileset,indexed=$fileidx,fd=2
  flowop writewholefile name=writefile2,fd=2,iosize=$wrtiosize,srcfd=1
  flowop closefile name=closefile1,fd=1
  flowop closefile name=closefile2,fd=2
  flowop deletefile name=deletefile1,filesetname=bigfileset
}

# Start an application: read three files whole, overlapping their opens.
define flowop name=launch
{
  flowop openfile name=openfile3,filesetname=bigfileset,indexed=$fileidx,fd=3
  flowop readwholefile name=readfile3,iosize=$rdiosize,fd=3
  flowop openfile name=openfile4,filesetname=bigfileset,indexed=$fileidx,fd=4
  flowop readwholefile name=readfile4,iosize=$rdiosize,fd=4
  flowop closefile name=closefile3,fd=3
  flowop openfile name=openfile5,filesetname=bigfileset,indexed=$fileidx,fd=5
  flowop readwholefile name=readfile5,iosize=$rdiosize,fd=5
  flowop closefile name=closefile4,fd=4
  flowop closefile name=closefile5,fd=5
}

# Append to an existing file.
define flowop name=appnd
{
  flowop openfile name=openfile6,filesetname=bigfileset,indexed=$fileidx,fd=6
  flowop appendfilerand name=appendfilerand6,iosize=$wrtiosize,fd=6
  flowop closefile name=closefile6,fd=6
}

define process name=netclient,instances=1
{
  thread name=fileuser,memsize=10m,instances=$nthreads
  {
    flowop launch name=launch1,iters=1
    flowop rmw name=rmw1,iters=6
    flowop appnd name=appnd1,iters=3
    flowop statfile name=statfile1,filesetname=bigfileset,indexed=$fileidx
    flowop eventlimit name=ratecontrol
  }
}

run $runtime
