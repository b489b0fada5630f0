//! The binary Tandem packs into every FMU is shipped without debug
//! information or a symbol table (a tenth of the size); its FMI functions
//! stay in the dynamic symbol table, where importers find them.

// The release profile strips it (what `tandem export` ships, built with
// --release); debug builds keep their symbols for debugging.
#![cfg(all(target_os = "linux", not(debug_assertions)))]

mod support;

/// The names of the sections of the ELF file `bytes` (64-bit, little
/// endian, as on x86_64 and aarch64 Linux).
fn section_names(bytes: &[u8]) -> Vec<String> {
    assert_eq!(&bytes[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(bytes[4], 2, "not a 64-bit ELF file");
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let (table, size, count, names) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let header = |i: usize| table + i * size;
    // A section header: name offset at 0, file offset at 0x18.
    let strings = u64_at(header(names) + 0x18);
    (0..count)
        .map(|i| {
            let start = strings + u32::from_le_bytes(bytes[header(i)..header(i) + 4].try_into().unwrap()) as usize;
            let end = start + bytes[start..].iter().position(|&b| b == 0).unwrap();
            String::from_utf8_lossy(&bytes[start..end]).into_owned()
        })
        .collect()
}

#[test]
fn the_fmu_binary_has_no_debug_information_nor_symbol_table() {
    let library = support::library();
    let bytes = std::fs::read(&library).unwrap();
    let sections = section_names(&bytes);
    assert!(sections.iter().any(|s| s == ".dynsym"), "{sections:?}");
    let kept: Vec<&String> = sections
        .iter()
        .filter(|s| s.starts_with(".debug") || *s == ".symtab")
        .collect();
    println!("{}: {} bytes, sections {sections:?}", library.display(), bytes.len());
    assert!(kept.is_empty(), "{} keeps {kept:?}", library.display());
}
