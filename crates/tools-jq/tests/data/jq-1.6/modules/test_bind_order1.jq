def sym0: 1;
def sym1: 1;
