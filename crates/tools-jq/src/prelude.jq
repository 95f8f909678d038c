# Definitions that make jaq behave like jq 1.6. Loaded after jaq's own standard
# library, so these shadow jaq's definitions of the same name. Names starting
# with `_jq_` are native filters of this crate (src/natives.rs).

# Keep handles on jaq's natives before shadowing them.
def _jaq_ltrimstr($x): ltrimstr($x);
def _jaq_rtrimstr($x): rtrimstr($x);
def _jaq_startswith($x): startswith($x);
def _jaq_endswith($x): endswith($x);
def _jaq_limit($n; f): limit($n; f);

# Conversion with jq 1.6 number formatting.
# (A string is returned as it is, so `path(.a | tostring)` is `["a"]` as in jq 1.6.)
def tostring: if type == "string" then . else _jq_tostring end;
def tojson: _jq_tojson;
def fromjson: _jq_fromjson;
def tonumber: _jq_tonumber;
def @text: _jq_tostring;
def @json: _jq_tojson;
def @csv: _jq_csv;
def @tsv: _jq_tsv;
def @html: _jq_html;
def @uri: _jq_uri;
def @sh: _jq_sh;
def @base64: _jq_base64;
def @base64d: _jq_base64d;

# jq 1.6 leaves non-strings alone.
def ltrimstr($x): if type == "string" and ($x | type) == "string" then _jaq_ltrimstr($x) else . end;
def rtrimstr($x): if type == "string" and ($x | type) == "string" then _jaq_rtrimstr($x) else . end;
def startswith($x):
  if type == "string" and ($x | type) == "string" then _jaq_startswith($x)
  else error("startswith() requires string inputs") end;
def endswith($x):
  if type == "string" and ($x | type) == "string" then _jaq_endswith($x)
  else error("endswith() requires string inputs") end;

def join($x): reduce .[] as $i (null;
  (if . == null then "" else . + $x end) +
  ($i | if . == null then "" elif (type == "boolean" or type == "number") then tojson else . end)
) // "";

def _jq_key: if type == "string" then . else error("Cannot use \(type) (\(tojson)) as object key") end;
# jq 1.6's key and value names (not jq 1.7's `k`/`K`/`v`/`V`).
def from_entries: map({(.key // .Key // .name // .Name | _jq_key):
  (if has("value") then .value else .Value end)}) | add + {} // {};
def setpath($p; $x): _jq_setpath($p; $x);

def walk(f): . as $in
  | if type == "object" then
      reduce keys_unsorted[] as $key ( {}; . + { ($key): ($in[$key] | walk(f)) } ) | f
    elif type == "array" then map( walk(f) ) | f
    else f end;

# Deleting keeps the order of the remaining keys, as jq does.
def delpaths($paths): _jq_delpaths($paths);
def del(f): delpaths([path(f)]);

# jq 1.6: limit(0; f) yields the first output, a negative limit yields all.
def limit($n; f): if $n > 0 then _jaq_limit($n; f) elif $n == 0 then first(f) else f end;

def reverse: [.[length - 1 - range(0; length)]];
def env: $ENV;
# jq 1.6: an error whose message is null ends the output quietly.
def error(msgs): (msgs | select(. != null) | error_empty) as $x | .;
def error: error(.);
def input_line_number: _jq_input_line;
def nan: _jq_nan;
def infinite: _jq_infinite;
def isnan: _jq_isnan;
def utf8bytelength: _jq_utf8bytelength;
def isinfinite: _jq_isinfinite;
def isnormal: _jq_isnormal;
def isfinite: type == "number" and (isinfinite | not);
def leaf_paths: paths(scalars);
def recurse_down: recurse;
def INDEX(stream; idx_expr): reduce stream as $row ({}; .[$row|idx_expr|tostring] |= $row);
def INDEX(idx_expr): INDEX(.[]; idx_expr);
def JOIN($idx; idx_expr): [.[] | [., $idx[idx_expr]]];
def JOIN($idx; stream; idx_expr): stream | [., $idx[idx_expr]];
def JOIN($idx; stream; idx_expr; join_expr): stream | [., $idx[idx_expr]] | join_expr;
# jq 1.6: `last(empty)` is null, and `last(f)` is not a path expression
# (`path(last(.[]))` and `last(.[]) |= x` fail as in jq).
def last(f): reduce f as $x (null; $x);
def nth($n): .[$n];
def nth($n; f): if $n < 0 then error("nth doesn't support negative indices") else last(limit($n + 1; f)) end;
def IN(s): any(s == .; .);
def IN(src; s): any(src == s; .);
def todate: strftime("%Y-%m-%dT%H:%M:%SZ");
def debug: _jq_debug;
def stderr: _jq_stderr;
def halt_error($code): _jq_halt_msg, halt($code);
def halt_error: halt_error(5);
def tostream: path(def r: (.[]?|r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p+$q]);
def fromstream(f): { x: null, e: false } as $init
  | foreach f as $i ($init;
      if .e then $init else . end
      | if $i | length == 2
        then setpath(["e"]; $i[0] | length == 0) | setpath(["x"] + $i[0]; $i[1])
        else setpath(["e"]; $i[0] | length == 1) end;
      if .e then .x else empty end);
def truncate_stream(stream): . as $n | null | stream | . as $input
  | if (.[0]|length) > $n then setpath([0];.[0][$n:]) else empty end;
# jq 1.6 recurses forever (and crashes) when `f` maps null to null; stop there.
def recurse(f): def r: . as $x | ., (f | _jq_tick | if . == null and $x == null then empty else r end); r;
def recurse(f; cond): def r: ., (f | select(cond) | _jq_tick | r); r;
def _flatten($x): reduce .[] as $i ([]; if $i | type == "array" and $x != 0 then . + ($i | _flatten($x - 1)) else . + [$i] end);
def flatten($x): if $x < 0 then error("flatten depth must not be negative") else _flatten($x) end;
def flatten: _flatten(-1);
# jq 1.7 additions jq 1.6 lacks (no conflict: 1.6 stops with an error).
def @base32: _jq_base32;
def @base32d: _jq_base32d;
def toarray: if type == "array" then . else [.] end;
def pick(pathexps): . as $top
  | reduce path(pathexps) as $p (null; setpath($p; $top | getpath($p)));
# Numbers are doubles here: no literal or decNumber precision is kept.
def have_literal_numbers: false;
def have_decnum: false;
# Loops of jq 1.6, each step polling for cancellation (`_jq_tick`).
def range($from; $upto; $by): _jq_range($from; $upto; $by);
def range($from; $upto): _jq_range($from; $upto; 1);
def range($upto): _jq_range(0; $upto; 1);
def repeat(f): def _repeat: f, (_jq_tick | _repeat); _repeat;
def while(cond; update): def _while: if cond then ., (update | _jq_tick | _while) else empty end; _while;
def until(cond; update): def _until: if cond then . else (update | _jq_tick | _until) end; _until;
