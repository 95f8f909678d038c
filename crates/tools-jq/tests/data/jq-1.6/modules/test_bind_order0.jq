def sym0: 0;
