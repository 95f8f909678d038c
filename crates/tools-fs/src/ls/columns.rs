//! GNU `ls -C` (down columns) and `-x` (across) layouts: the widest arrangement
//! that fits the line width, padded with tabs (tab stops every 8) and spaces.

const MIN_COLUMN_WIDTH: usize = 3;

/// Chooses column widths for `lens` (name lengths with indicators).
fn widths(lens: &[usize], line: usize, by_columns: bool) -> Vec<usize> {
    let n = lens.len();
    let max_cols = (line / MIN_COLUMN_WIDTH).max(1).min(n.max(1));
    let mut best: Vec<usize> = vec![lens.iter().copied().max().unwrap_or(0)];
    for cols in (1..=max_cols).rev() {
        let mut arr = vec![MIN_COLUMN_WIDTH; cols];
        let mut line_len = cols * MIN_COLUMN_WIDTH;
        let mut ok = true;
        let rows = n.div_ceil(cols);
        for (i, &len) in lens.iter().enumerate() {
            let idx = if by_columns {
                i / rows.max(1)
            } else {
                i % cols
            };
            let real = len + if idx + 1 == cols { 0 } else { 2 };
            if let Some(slot) = arr.get_mut(idx)
                && *slot < real
            {
                line_len += real - *slot;
                *slot = real;
                if line_len >= line {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            best = arr;
            break;
        }
    }
    best
}

fn indent(out: &mut Vec<u8>, mut from: usize, to: usize, tab: usize) {
    while from < to {
        if tab != 0 && to / tab > (from + 1) / tab {
            out.push(b'\t');
            from += tab - from % tab;
        } else {
            out.push(b' ');
            from += 1;
        }
    }
}

/// Lays out `names` (already carrying their indicators) in columns.
pub fn layout(out: &mut Vec<u8>, names: &[Vec<u8>], line: usize, tab: usize, by_columns: bool) {
    if names.is_empty() {
        return;
    }
    let lens: Vec<usize> = names.iter().map(Vec::len).collect();
    let arr = widths(&lens, line, by_columns);
    let cols = arr.len().max(1);
    let n = names.len();
    if by_columns {
        let rows = n.div_ceil(cols);
        for row in 0..rows {
            let mut pos = 0;
            let mut col = 0;
            let mut i = row;
            while let (Some(name), Some(&w)) = (names.get(i), arr.get(col)) {
                out.extend_from_slice(name);
                col += 1;
                i += rows;
                if i >= n {
                    break;
                }
                indent(out, pos + name.len(), pos + w, tab);
                pos += w;
            }
            out.push(b'\n');
        }
    } else {
        let mut pos = 0;
        for (i, name) in names.iter().enumerate() {
            let col = i % cols;
            if i > 0 {
                if col == 0 {
                    out.push(b'\n');
                    pos = 0;
                } else {
                    let prev = arr.get(col - 1).copied().unwrap_or(0);
                    let plen = names.get(i - 1).map_or(0, Vec::len);
                    indent(out, pos + plen, pos + prev, tab);
                    pos += prev;
                }
            }
            out.extend_from_slice(name);
        }
        out.push(b'\n');
    }
}
