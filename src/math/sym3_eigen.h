/* sym3_eigen.h -- eigen-decomposition of a symmetric 3x3 matrix in double precision (Jacobi rotations).
 * Used by normals, the SHOT and BOARD frames. */
#ifndef GRIP_MATH_SYM3_EIGEN_H
#define GRIP_MATH_SYM3_EIGEN_H

/* a: row-major symmetric 3x3. Writes eigenvalues in ascending order and the matching unit eigenvectors as the
 * COLUMNS of vecs (row-major 3x3: vecs[r*3+c] is component r of eigenvector c). */
void grip_sym3_eigen(const double a[9], double values[3], double vecs[9]);

#endif
