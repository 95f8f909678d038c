grep -rn "TODO" src | wc -l
grep -c ERROR logs/app.log
grep -l "f1" src/*.rs | head -3
