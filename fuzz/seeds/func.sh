f() { local x=$1; echo ${x:-d} ${#x}; }; f "a b" | tr a-z A-Z
