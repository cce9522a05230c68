//! YCSB's generators: keys, key choosers, operation mix, field and scan
//! lengths. (Being written.)
