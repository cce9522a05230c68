fn main() {
    std::process::exit(fsbench::cli::main());
}
