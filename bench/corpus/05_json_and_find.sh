jq -r '.deps | keys[]' data/config.json
jq '.items | add' data/config.json
find . -name '*.rs' | sort | head -5
find src -type f | xargs wc -l | tail -1
