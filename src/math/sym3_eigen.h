/* sym3_eigen.h -- eigen-decomposition of a symmetric 3x3 matrix: an accurate double-precision solver (Jacobi
 * rotations) for the local frames, and PCL's own float solver where normals must reproduce PCL. */
#ifndef GRIP_MATH_SYM3_EIGEN_H
#define GRIP_MATH_SYM3_EIGEN_H

/* a: row-major symmetric 3x3 (the upper triangle is read). Writes eigenvalues in ascending order and the
 * matching unit eigenvectors as the COLUMNS of vecs (row-major 3x3: vecs[r*3+c] is component r of eigenvector
 * c). Eigenvector signs are unspecified. Accurate to double precision for every input, repeated and zero
 * eigenvalues included. */
void grip_sym3_eigen(const double a[9], double values[3], double vecs[9]);

/* The smallest eigenvalue of a (row-major symmetric 3x3, float) and its eigenvector, with the float operations
 * of PCL 1.13's pcl::eigen33(mat, eigenvalue, eigenvector): the matrix scaled by its largest |entry|, the
 * roots of the characteristic cubic in closed form (an eigenvalue that comes out <= 0, or a determinant below
 * FLT_EPSILON, is taken as exactly 0), and the eigenvector as the longest cross product of two rows of
 * (A - l0 I), normalised. Where l0 and l1 nearly coincide this is less accurate than grip_sym3_eigen, but it
 * is PCL's answer; use it where parity with PCL is the point. vec is NaN when every such cross product is 0
 * (A - l0 I of rank < 2: e.g. A = 0, or a covariance of collinear points along an axis). */
float grip_sym3_smallest_pcl(const float a[9], float vec[3]);

#endif
