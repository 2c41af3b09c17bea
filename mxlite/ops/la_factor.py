"""More of mx.nd.linalg: gelqf, syevd, extracttrian, maketrian."""
