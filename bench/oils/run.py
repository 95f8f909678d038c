#!/usr/bin/env python3
"""Runs Oils' spec cases (`spec/*.test.sh` of the oils-for-unix sources, not
vendored here) in bash and in safesh and counts the cases whose stdout and
exit status agree under both LC_ALL=C and C.UTF-8 (bash is the oracle; the
`## STDOUT:` expectations in the files are not used).

    SAFESH=$(bench/release_path.sh) bench/oils/run.py SPEC_DIR/*.test.sh
    V=1 ...        # print each differing case's outputs
    LOCS=C ...     # one locale only

The Oils helpers the cases call (`argv.py`, `printenv.py`, ...) are shell
functions in prelude.sh, so no Python runs inside the cases. Each case runs in
a fresh temp dir as cwd and HOME, with a 20 s limit. Last count: 954/957
(docs/BENCHMARKS.md).
"""
import sys, os, subprocess, tempfile, re, shutil
HERE = os.path.dirname(os.path.abspath(__file__))
SAFESH = os.environ.get('SAFESH') or subprocess.run(
    [os.path.join(HERE, '..', 'release_path.sh')], capture_output=True, text=True, check=True).stdout.strip()
prelude = open(os.path.join(HERE, 'prelude.sh')).read()
def cases(path):
    name=None; body=[]
    for line in open(path, encoding='utf-8', errors='surrogateescape'):
        if line.startswith('####'):
            if name is not None: yield name, ''.join(body)
            name=line[4:].strip(); body=[]
        elif name is not None:
            body.append(line)
    if name is not None: yield name, ''.join(body)
def run(sh, script, loc):
    d = tempfile.mkdtemp(prefix='oils')
    env = {'LC_ALL': loc, 'HOME': d, 'PATH': '/usr/bin:/bin', 'TZ': 'UTC', 'TMP': d, 'SH': 'bash'}
    cmd = ['bash','--norc','--noprofile','-c', prelude+script] if sh=='bash' else [SAFESH,'-c',prelude+script]
    try:
        p = subprocess.run(cmd, cwd=d, env=env, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
        r = (p.stdout, p.returncode, p.stderr)
    except subprocess.TimeoutExpired:
        r = (b'TIMEOUT', -1, b'')
    shutil.rmtree(d, ignore_errors=True)
    return r
verbose = os.environ.get('V')
tot=0; ok=0
locs = os.environ.get('LOCS','C C.UTF-8').split()
for f in sys.argv[1:]:
    ft=0; fo=0
    for name, body in cases(f):
        good=True
        for loc in locs:
            b = run('bash', body, loc); s = run('safesh', body, loc)
            if (b[0], b[1]) != (s[0], s[1]):
                good=False
                if verbose:
                    print(f'--- FAIL {os.path.basename(f)} :: {name} [{loc}]')
                    print('bash  :', b[1], repr(b[0][:400]))
                    print('safesh:', s[1], repr(s[0][:400]), s[2][:300].decode(errors='replace'))
                break
        ft+=1; fo+=good
        if not good and not verbose: print(f'FAIL {os.path.basename(f)} :: {name}')
    print(f'{os.path.basename(f)}: {fo}/{ft}')
    tot+=ft; ok+=fo
print(f'TOTAL {ok}/{tot} = {100*ok/max(tot,1):.1f}%')
