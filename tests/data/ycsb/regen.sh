#!/bin/sh
# Regenerates the fixtures in this folder with Java YCSB's own classes.
# Needs a JDK and YCSB built as in /var/tmp/fsbench-peers/ycsb (its
# `classpath` file lists core's classes and jars); pass another classpath
# file as $1 if YCSB lives elsewhere.
set -e
here=$(cd "$(dirname "$0")" && pwd)
cp_file=${1:-/var/tmp/fsbench-peers/ycsb/classpath}
cp=$(cat "$cp_file")
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
javac -d "$build" -cp "$cp" "$here/YcsbFixtures.java"
java -cp "$build:$cp" YcsbFixtures "$here"
