fn main() { let mut s = String::new(); let _ = std::io::stdin().read_line(&mut s); println!("{s}"); }
