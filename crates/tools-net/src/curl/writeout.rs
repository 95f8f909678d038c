//! `-w` / `--write-out`: `%{var}` substitution and backslash escapes.

/// What a transfer left for `-w` to print.
#[derive(Clone, Debug, Default)]
pub struct Info {
    /// Status of the last response (0 when none).
    pub http_code: u16,
    /// Body bytes received.
    pub size_download: u64,
    /// The last URL requested.
    pub url_effective: String,
    /// The last response's Content-Type.
    pub content_type: String,
    /// Redirects followed.
    pub num_redirects: u32,
    /// Where the last response redirects to (when not followed).
    pub redirect_url: String,
    /// The last request's method.
    pub method: String,
    /// curl's exit code for this transfer.
    pub exitcode: i32,
    /// curl's error message for this transfer.
    pub errormsg: String,
}

/// Expands `fmt`; unknown variables are warned about on `warn` and print nothing.
pub fn expand(fmt: &[u8], info: &Info, warn: &mut Vec<String>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = fmt.get(i) {
        i += 1;
        match c {
            b'%' => {
                if fmt.get(i) == Some(&b'%') {
                    out.push(b'%');
                    i += 1;
                    continue;
                }
                if fmt.get(i) == Some(&b'{') {
                    let rest = fmt.get(i + 1..).unwrap_or(&[]);
                    if let Some(end) = rest.iter().position(|&b| b == b'}') {
                        let name = String::from_utf8_lossy(rest.get(..end).unwrap_or(&[]));
                        i += end + 2;
                        match var(&name, info) {
                            Some(v) => out.extend_from_slice(v.as_bytes()),
                            None => warn.push(format!("unknown --write-out variable: '{name}'")),
                        }
                        continue;
                    }
                }
                out.push(b'%');
            }
            b'\\' => match fmt.get(i) {
                Some(b'n') => {
                    out.push(b'\n');
                    i += 1;
                }
                Some(b'r') => {
                    out.push(b'\r');
                    i += 1;
                }
                Some(b't') => {
                    out.push(b'\t');
                    i += 1;
                }
                Some(b'\\') => {
                    out.push(b'\\');
                    i += 1;
                }
                _ => out.push(b'\\'),
            },
            _ => out.push(c),
        }
    }
    out
}

fn var(name: &str, i: &Info) -> Option<String> {
    Some(match name {
        "http_code" | "response_code" => format!("{:03}", i.http_code),
        "size_download" => i.size_download.to_string(),
        "url_effective" => i.url_effective.clone(),
        "content_type" => i.content_type.clone(),
        "num_redirects" => i.num_redirects.to_string(),
        "redirect_url" => i.redirect_url.clone(),
        "method" => i.method.clone(),
        "exitcode" => i.exitcode.to_string(),
        "errormsg" => i.errormsg.clone(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands() {
        let info = Info {
            http_code: 7,
            method: "GET".into(),
            ..Default::default()
        };
        let mut w = Vec::new();
        let o = expand(b"%{http_code} %{method}%%\\n%{nope}", &info, &mut w);
        assert_eq!(o, b"007 GET%\n".to_vec());
        assert_eq!(w.len(), 1);
    }
}
