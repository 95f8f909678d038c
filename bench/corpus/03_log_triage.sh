grep ERROR logs/app.log | sed 's/.*ms=//' | sort -n | tail -1
grep -E 'WARN|ERROR' logs/app.log | awk '{print $3}' | sort | uniq -c
head -20 logs/app.log | tail -5
