def a: "b";
def b: "c";
