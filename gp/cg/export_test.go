package cg

// DirectCGMissed exposes to the package's external tests the reason a prediction cache is direct when α's CG
// solve missed its tolerance (GPR.CacheDirect).
const DirectCGMissed = directCGMissed
