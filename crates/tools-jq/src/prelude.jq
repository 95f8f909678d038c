# Definitions that make jaq behave like jq 1.6. Loaded after jaq's own standard
# library, so these shadow jaq's definitions of the same name. Names starting
# with `_jq_` are native filters of this crate (src/natives.rs).

# Keep handles on jaq's natives before shadowing them.
def _jaq_ltrimstr($x): ltrimstr($x);
def _jaq_rtrimstr($x): rtrimstr($x);
def _jaq_startswith($x): startswith($x);
def _jaq_endswith($x): endswith($x);
def _jaq_limit($n; f): limit($n; f);
def _jaq_getpath($p): getpath($p);

# jq 1.6's C builtins (natives.rs) whose jq names jaq also defines.
def keys: _jq_keys;
def keys_unsorted: _jq_keys_unsorted;
def min: _jq_min;
def max: _jq_max;
def getpath($p):
  if ($p | type) == "array" then _jaq_getpath($p)
  else error("Path must be specified as an array") end;

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
def debug: _jq_debug;
def stderr: _jq_stderr;
def halt_error($code): _jq_halt_error($code);
def halt_error: halt_error(5);
def tostream: path(def r: (.[]?|r), .; r) as $p | getpath($p) | reduce path(.[]?) as $q ([$p, .]; [$p+$q]);
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
# range/3 on numbers is native; jq 1.6's definition gives the rest.
def range($from; $upto; $by):
  if ($from | type) == "number" and ($upto | type) == "number" and ($by | type) == "number"
  then _jq_range($from; $upto; $by)
  else
    def _range:
      if ($by > 0 and . < $upto) or ($by < 0 and . > $upto) then ., ((. + $by) | _range) else . end;
    if $by == 0 then $from else $from | _range end
    | select(($by > 0 and . < $upto) or ($by < 0 and . > $upto))
  end;
def range($from; $upto): _jq_range($from; $upto; 1);
def range($upto): _jq_range(0; $upto; 1);
def repeat(f): def _repeat: f, (_jq_tick | _repeat); _repeat;
def while(cond; update): def _while: if cond then ., (update | _jq_tick | _while) else empty end; _while;
def until(cond; update): def _until: if cond then . else (update | _jq_tick | _until) end; _until;

# jq 1.6's own definitions (its builtin.jq), so that results and errors are
# its own; `_jq_*` and `_*_impl` are natives (natives.rs) doing what its C
# functions do.
def sort_by(f): _sort_by_impl(map([f]));
def group_by(f): _group_by_impl(map([f]));
def unique: group_by(.) | map(.[0]);
def unique_by(f): group_by(f) | map(.[0]);
def max_by(f): _max_by_impl(map([f]));
def min_by(f): _min_by_impl(map([f]));
def to_entries: [keys_unsorted[] as $k | {key: $k, value: .[$k]}];
def with_entries(f): to_entries | map(f) | from_entries;
def indices($i): if type == "array" and ($i|type) == "array" then .[$i]
  elif type == "array" then .[[$i]]
  elif type == "string" and ($i|type) == "string" then _strindices($i)
  else .[$i] end;
def index($i): indices($i) | .[0];
def rindex($i): indices($i) | .[-1:][0];
def arrays: select(type == "array");
def objects: select(type == "object");
def iterables: arrays, objects;
def booleans: select(type == "boolean");
def numbers: select(type == "number");
def normals: select(isnormal);
def finites: select(isfinite);
def strings: select(type == "string");
def nulls: select(type == "null");
def values: select(. != null);
def scalars: select(. == null or . == true or . == false or type == "number" or type == "string");
def scalars_or_empty: select(. == null or . == true or . == false or type == "number" or type == "string" or ((type=="array" or type=="object") and length==0));
def fromdateiso8601: strptime("%Y-%m-%dT%H:%M:%SZ")|mktime;
def todateiso8601: strftime("%Y-%m-%dT%H:%M:%SZ");
def fromdate: fromdateiso8601;
def todate: todateiso8601;
def pow10: "Error: pow10/0 not found at build time"|error;

# Regular expressions: jq 1.6's definitions over `_match_impl`, which makes
# jq's checks (`_jq_regex_mode`) and matches with jaq's engine.
def _match_impl($re; $mode; $test):
  _jq_regex_mode($re; $mode) as $m
  | if $test then matches($re; $m) | length > 0
    else . as $s | matches($re; $m) | _jq_match_objects($s; $m) end;
def match(re; mode): _match_impl(re; mode; false)|.[];
def match($val): ($val|type) as $vt | if $vt == "string" then match($val; null)
   elif $vt == "array" and ($val | length) > 1 then match($val[0]; $val[1])
   elif $vt == "array" and ($val | length) > 0 then match($val[0]; null)
   else error( $vt + " not a string or array") end;
def test(re; mode): _match_impl(re; mode; true);
def test($val): ($val|type) as $vt | if $vt == "string" then test($val; null)
   elif $vt == "array" and ($val | length) > 1 then test($val[0]; $val[1])
   elif $vt == "array" and ($val | length) > 0 then test($val[0]; null)
   else error( $vt + " not a string or array") end;
def capture(re; mods): match(re; mods) | reduce ( .captures | .[] | select(.name != null) | { (.name) : .string } ) as $pair ({}; . + $pair);
def capture($val): ($val|type) as $vt | if $vt == "string" then capture($val; null)
   elif $vt == "array" and ($val | length) > 1 then capture($val[0]; $val[1])
   elif $vt == "array" and ($val | length) > 0 then capture($val[0]; null)
   else error( $vt + " not a string or array") end;
def scan(re):
  match(re; "g")
  |  if (.captures|length > 0)
      then [ .captures | .[] | .string ]
      else .string
      end ;
def _nwise(a; $n): if a|length <= $n then a else a[0:$n] , _nwise(a[$n:]; $n) end;
def _nwise($n): _nwise(.; $n);
def splits($re; flags): . as $s
  | [ match($re; "g" + flags) | (.offset, .offset + .length) ]
  | [0] + . +[$s|length]
  | _nwise(2)
  | $s[.[0]:.[1] ] ;
def splits($re): splits($re; null);
def split($re; flags): [ splits($re; flags) ];
# jq 1.6's `sub` takes its flags apart as here, then replaces match by match;
# the matches are found in one global search (jq searches the rest of the
# text again after each, which loops forever on an empty match).
def sub($re; s; $flags):
  ($flags | index("g")) as $gs
  | ($flags | if $gs then [explode[] | select(. != 103)] | implode else . end) as $fla
  | [., [match($re; if $gs then $fla + "g" else $fla end)]]
  | _jq_substitute(s);
# jq 1.6 defines `sub/2` twice; its first definition is the one in effect.
def sub($re; s):
  . as $in
  | [match($re)]
  | if length == 0 then $in
    else .[0]
    | . as $r
    | reduce ( $r | .captures | .[] | select(.name != null) | { (.name) : .string } ) as $pair
        ({}; . + $pair)
    | $in[0:$r.offset] + s + $in[$r.offset+$r.length:]
    end ;
def gsub($re; s; $flags): sub($re; s; $flags + "g");
def gsub($re; s): sub($re; s; "g");

def combinations:
    if length == 0 then [] else
        .[0][] as $x
          | (.[1:] | combinations) as $y
          | [$x] + $y
    end;
def combinations(n):
    . as $dot
      | [range(n) | $dot]
      | combinations;
def transpose:
  if . == [] then []
  else . as $in
  | (map(length) | max) as $max
  | length as $length
  | reduce range(0; $max) as $j
      ([]; . + [reduce range(0;$length) as $i ([]; . + [ $in[$i][$j] ] )] )
  end;
def in(xs): . as $x | xs | has($x);
def inside(xs): . as $x | xs | contains($x);
def truncate_stream(stream):
  . as $n | null | stream | . as $input | if (.[0]|length) > $n then setpath([0];$input[0][$n:]) else empty end;
def fromstream(i):
  foreach i as $item (
    [null,false,null,false];
    if ($item[0]|length) == 0 then [null,false,.[2],.[3]]
    elif ($item|length) == 1 and ($item[0]|length) < 2 then [null,false,.[0],.[1]]
    else . end |
    . as $state |
    if ($item|length) > 1 and ($item[0]|length) > 0 then
      [.[0]|setpath(($item|.[0]); ($item|.[1])),
      true,
      $state[2],
      $state[3]]
    else .
    end;
    if ($item[0]|length) == 1 and ($item|length == 1) and .[3] then .[2] else empty end,
    if ($item[0]|length) == 0 then $item[1] else empty end
    );
def bsearch(target):
  if length == 0 then -1
  elif length == 1 then
     if target == .[0] then 0 elif target < .[0] then -1 else -2 end
  else . as $in
    | [0, length-1, null]
    | until( .[0] > .[1] ;
             if .[2] != null then (.[1] = -1)
             else
               ( ( (.[1] + .[0]) / 2 ) | floor ) as $mid
               | $in[$mid] as $monkey
               | if $monkey == target  then (.[2] = $mid)
                 elif .[0] == .[1]     then (.[1] = -1)
                 elif $monkey < target then (.[0] = ($mid + 1))
                 else (.[1] = ($mid - 1))
                 end
             end )
    | if .[2] == null then
         if $in[ .[0] ] < target then (-2 -.[0])
         else (-1 -.[0])
         end
      else .[2]
      end
  end;
def IN(s): reduce (first(select(. == s)) | true) as $v (false; if . or $v then true else false end);
def IN(src; s): reduce (src|IN(s)) as $v (false; if . or $v then true else false end);
