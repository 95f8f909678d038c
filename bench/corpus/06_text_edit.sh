sed -n '1,3p' src/mod1.rs
sed 's/TODO/DONE/' src/mod2.rs | grep -c DONE
cat src/mod3.rs | tr a-z A-Z | head -2
printf '%s\n' b a c | sort | paste -sd, -
