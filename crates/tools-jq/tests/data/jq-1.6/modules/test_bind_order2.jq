def sym1: 2;
def sym2: 2;
