for i in 1 2 3; do echo $i | grep 2; done
