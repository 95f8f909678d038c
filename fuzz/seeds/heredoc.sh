cat <<EOF
$((1+2)) $(echo hi)
EOF
