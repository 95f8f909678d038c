tail -n +2 data/sales.csv | cut -d, -f3 | sort | uniq -c | sort -rn | head -5
awk -F, 'NR > 1 { s[$3] += $4 } END { for (c in s) print c, s[c] }' data/sales.csv | sort | head -3
