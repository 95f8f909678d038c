def f: "f is here";
