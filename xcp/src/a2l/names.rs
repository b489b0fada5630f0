//! A2L identifiers and strings made from arbitrary names: the mapping of a
//! block path to a valid, unique identifier, and the escaping and bounding
//! of quoted strings.

use std::collections::BTreeSet;

/// The longest identifier written (ASAM MCD-2 MC 1.7 allows 1024
/// characters), leaving room for a uniqueness suffix.
pub const MAX_IDENTIFIER: usize = 1000;
/// The longest quoted string written, in characters (the standard's
/// STRING bound).
pub const MAX_STRING: usize = 255;

/// A2L keywords: an identifier equal to one of them gets a trailing `_`,
/// so that no reader takes a name for a keyword.
const KEYWORDS: &[&str] = &[
    "A2ML",
    "A2ML_VERSION",
    "ABSOLUTE",
    "ADDR_EPK",
    "ADDRESS_TYPE",
    "ALIGNMENT_BYTE",
    "ALIGNMENT_FLOAT16_IEEE",
    "ALIGNMENT_FLOAT32_IEEE",
    "ALIGNMENT_FLOAT64_IEEE",
    "ALIGNMENT_INT64",
    "ALIGNMENT_LONG",
    "ALIGNMENT_WORD",
    "ALTERNATE_CURVES",
    "ALTERNATE_WITH_X",
    "ALTERNATE_WITH_Y",
    "ANNOTATION",
    "ANNOTATION_LABEL",
    "ANNOTATION_ORIGIN",
    "ANNOTATION_TEXT",
    "ARRAY_SIZE",
    "ASAP2_VERSION",
    "ASCII",
    "AXIS_DESCR",
    "AXIS_PTS",
    "AXIS_PTS_REF",
    "AXIS_PTS_X",
    "AXIS_PTS_Y",
    "AXIS_PTS_Z",
    "AXIS_RESCALE_X",
    "BIT_MASK",
    "BIT_OPERATION",
    "BLOB",
    "BYTE_ORDER",
    "BYTE_ORDER_MSB_FIRST",
    "BYTE_ORDER_MSB_LAST",
    "CALIBRATION_ACCESS",
    "CALIBRATION_HANDLE",
    "CALIBRATION_METHOD",
    "CHARACTERISTIC",
    "COEFFS",
    "COEFFS_LINEAR",
    "COLUMN_DIR",
    "COMPARISON_QUANTITY",
    "COMPU_METHOD",
    "COMPU_TAB",
    "COMPU_TAB_REF",
    "COMPU_VTAB",
    "COMPU_VTAB_RANGE",
    "CONSISTENT_EXCHANGE",
    "CONVERSION",
    "CPU_TYPE",
    "CURVE",
    "CUSTOMER",
    "CUSTOMER_NO",
    "DATA",
    "DATA_SIZE",
    "DEF_CHARACTERISTIC",
    "DEFAULT_VALUE",
    "DEFAULT_VALUE_NUMERIC",
    "DEPENDENT_CHARACTERISTIC",
    "DEPOSIT",
    "DIRECT",
    "DISCRETE",
    "DISPLAY_IDENTIFIER",
    "DYNAMIC",
    "ECU",
    "ECU_ADDRESS",
    "ECU_ADDRESS_EXTENSION",
    "ECU_CALIBRATION_OFFSET",
    "EPROM",
    "EPK",
    "ERROR_MASK",
    "EVENT",
    "EXTENDED_LIMITS",
    "FIX_AXIS_PAR",
    "FIX_AXIS_PAR_DIST",
    "FIX_AXIS_PAR_LIST",
    "FLASH",
    "FLOAT16_IEEE",
    "FLOAT32_IEEE",
    "FLOAT64_IEEE",
    "FNC_VALUES",
    "FORMAT",
    "FORMULA",
    "FORMULA_INV",
    "FRAME",
    "FRAME_MEASUREMENT",
    "FUNCTION",
    "FUNCTION_LIST",
    "FUNCTION_VERSION",
    "GROUP",
    "GUARD_RAILS",
    "HEADER",
    "IDENTICAL",
    "IDENTIFICATION",
    "IF_DATA",
    "IN_MEASUREMENT",
    "INPUT_QUANTITY",
    "INSTANCE",
    "INTERN",
    "LAYOUT",
    "LEFT_SHIFT",
    "LINEAR",
    "LOC_MEASUREMENT",
    "MAP",
    "MAP_LIST",
    "MATRIX_DIM",
    "MAX_GRAD",
    "MAX_REFRESH",
    "MEASUREMENT",
    "MEMORY_LAYOUT",
    "MEMORY_SEGMENT",
    "MOD_COMMON",
    "MOD_PAR",
    "MODEL_LINK",
    "MODULE",
    "MONOTONY",
    "NO_AXIS_PTS_X",
    "NO_COMPU_METHOD",
    "NO_OF_INTERFACES",
    "NO_RESCALE_X",
    "NUMBER",
    "OFFSET_X",
    "OUT_MEASUREMENT",
    "PHONE_NO",
    "PHYS_UNIT",
    "PROJECT",
    "PROJECT_NO",
    "RAM",
    "RAT_FUNC",
    "READ_ONLY",
    "READ_WRITE",
    "RECORD_LAYOUT",
    "REF_CHARACTERISTIC",
    "REF_GROUP",
    "REF_MEASUREMENT",
    "REF_MEMORY_SEGMENT",
    "REF_UNIT",
    "REGISTER",
    "RESERVED",
    "RIGHT_SHIFT",
    "ROM",
    "ROOT",
    "ROW_DIR",
    "SBYTE",
    "SHIFT_OP_X",
    "SI_EXPONENTS",
    "SIGN_EXTEND",
    "SLONG",
    "SRC_ADDR_X",
    "STATIC_RECORD_LAYOUT",
    "STATUS_STRING_REF",
    "STEP_SIZE",
    "STRUCTURE_COMPONENT",
    "SUB_FUNCTION",
    "SUB_GROUP",
    "SUPPLIER",
    "SWORD",
    "SYMBOL_LINK",
    "SYSTEM_CONSTANT",
    "TAB_INTP",
    "TAB_NOINTP",
    "TAB_VERB",
    "TRANSFORMER",
    "TYPEDEF_AXIS",
    "TYPEDEF_BLOB",
    "TYPEDEF_CHARACTERISTIC",
    "TYPEDEF_MEASUREMENT",
    "TYPEDEF_STRUCTURE",
    "UBYTE",
    "ULONG",
    "UNIT",
    "UNIT_CONVERSION",
    "USER",
    "USER_RIGHTS",
    "UWORD",
    "VAL_BLK",
    "VALUE",
    "VAR_ADDRESS",
    "VAR_CHARACTERISTIC",
    "VAR_CRITERION",
    "VAR_FORBIDDEN_COMB",
    "VAR_MEASUREMENT",
    "VAR_NAMING",
    "VAR_SELECTION_CHARACTERISTIC",
    "VAR_SEPARATOR",
    "VARIANT_CODING",
    "VERSION",
    "VIRTUAL",
    "VIRTUAL_CHARACTERISTIC",
    "A_INT64",
    "A_UINT64",
];

/// The identifier for `name`, before uniqueness is settled:
///
/// - `/` (a block path's separator) becomes `.`;
/// - ASCII letters, digits, `_` and `.` are kept, and so is an index
///   `[digits]` (`pos[1]` stays `pos[1]`);
/// - every other character (spaces, other punctuation, a stray bracket,
///   any non-ASCII character) becomes `_`;
/// - a name that is empty or starts with neither a letter nor `_` gets a
///   leading `_`;
/// - it is cut to [`MAX_IDENTIFIER`] characters;
/// - an A2L keyword (`VALUE`, `MEASUREMENT`, …) gets a trailing `_`.
pub fn identifier(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 1);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '/' => out.push('.'),
            '[' => {
                let digits = chars[i + 1..].iter().take_while(|d| d.is_ascii_digit()).count();
                if digits > 0 && chars.get(i + 1 + digits) == Some(&']') {
                    out.extend(&chars[i..i + digits + 2]);
                    i += digits + 2;
                    continue;
                }
                out.push('_');
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '.' => out.push(c),
            _ => out.push('_'),
        }
        i += 1;
    }
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    // All characters are ASCII, so a byte bound is a character bound.
    out.truncate(MAX_IDENTIFIER);
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// Unique identifiers for `bases` (as [`identifier`] made them), in their
/// order: a base used once is kept; the second and later uses of a base get
/// the first free `_2`, `_3`, … that is no other base and not yet given.
pub fn unique(bases: Vec<String>) -> Vec<String> {
    let mut taken: BTreeSet<String> = bases.iter().cloned().collect();
    let mut seen = BTreeSet::new();
    bases
        .into_iter()
        .map(|base| {
            if seen.insert(base.clone()) {
                return base;
            }
            let mut n = 2u64;
            loop {
                let candidate = format!("{base}_{n}");
                if taken.insert(candidate.clone()) {
                    return candidate;
                }
                n += 1;
            }
        })
        .collect()
}

/// `text` as a quoted A2L string: cut to `max` characters, `\` and `"`
/// escaped, line feed, carriage return and tab written as `\n`, `\r`,
/// `\t`, and other control characters as spaces.
pub fn quoted(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars().take(max) {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_brackets_and_keywords_map_to_identifiers() {
        assert_eq!(identifier("speed_map/gain"), "speed_map.gain");
        assert_eq!(identifier("pos[1]"), "pos[1]");
        assert_eq!(identifier("pos[x]"), "pos_x_");
        assert_eq!(identifier("a[1"), "a_1");
        assert_eq!(identifier("motor torque (Nm)"), "motor_torque__Nm_");
        assert_eq!(identifier("1st"), "_1st");
        assert_eq!(identifier("/root"), "_.root");
        assert_eq!(identifier(""), "_");
        assert_eq!(identifier("Geschwindigkeit_ü"), "Geschwindigkeit__");
        assert_eq!(identifier("VALUE"), "VALUE_");
        assert_eq!(identifier("value"), "value");
        assert_eq!(identifier(&"x".repeat(5000)).len(), MAX_IDENTIFIER);
    }

    #[test]
    fn repeated_bases_get_free_suffixes_that_no_other_name_has() {
        let got = unique(["a.b", "a.b", "a.b_2", "a.b", "c"].map(String::from).to_vec());
        assert_eq!(got, ["a.b", "a.b_3", "a.b_2", "a.b_4", "c"]);
    }

    #[test]
    fn strings_are_escaped_and_bounded() {
        assert_eq!(quoted("a \"b\" c:\\d\n", 255), r#""a \"b\" c:\\d\n""#);
        assert_eq!(quoted("x\u{1}y", 255), "\"x y\"");
        assert_eq!(quoted("äöü", 2), "\"äö\"");
    }
}
