// pcl_ghv_ref.cpp -- PCL 1.13's GlobalHypothesesVerification on given hypotheses, timed (the yardstick for grip's ghv).
// usage: pcl_ghv_ref model.pcd scene.pcd poses.txt [--reps N] [--leaf L] [--inlier T] [--occlusion T]
//                    [--clutter-radius R] [--clutter-reg C] [--regularizer R] [--normals-radius R]
// poses.txt: one hypothesis per line, 16 numbers (row-major 4x4, model -> scene). The model is voxel-grid thinned
// at --leaf (default 0.005, PCL's GHV tutorial's hv_resolution), moved by each pose, and handed to GHV with the
// tutorial's parameters unless overridden. Prints the accepted mask and median/min wall time of verify().
// A yardstick, not part of grip (nothing builds it; it needs PCL 1.13, Debian's libpcl-dev):
//   g++ -O2 -std=c++17 -fopenmp pcl_ghv_ref.cpp -o pcl_ghv_ref $(pkg-config --cflags --libs pcl_common pcl_io \
//       pcl_features pcl_filters pcl_kdtree pcl_search pcl_recognition pcl_registration pcl_sample_consensus)
// On the GPU machine, which has no PCL, run it with the libraries ../shared/tools/pcl_ref/make-carry.sh packs
// (LD_LIBRARY_PATH=<unpacked>/pcl_ref/lib). The poses: bench_ghv_cuda MODEL SCENE 100 poses.txt.
#include <pcl/io/pcd_io.h>
#include <pcl/point_types.h>
#include <pcl/filters/voxel_grid.h>
#include <pcl/filters/filter.h>
#include <pcl/common/transforms.h>
// a yardstick, not product code: the workaround below needs GHV's hidden model lists
#define private protected
#include <pcl/recognition/hv/hv_go.h>
#undef private
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

using P = pcl::PointXYZ;

// PCL 1.13's addModels(models, false) fills only the visible models and leaves the complete ones empty, so that
// verify() has nothing to verify; this hands the same clouds to both (no occlusion reasoning).
struct Ghv : pcl::GlobalHypothesesVerification<P, P> {
    void addModelsWithoutOcclusion(const std::vector<pcl::PointCloud<P>::ConstPtr> &models)
    {
        visible_models_ = models;
        complete_models_ = models;
    }
};

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: pcl_ghv_ref model.pcd scene.pcd poses.txt [options]\n");
        return 1;
    }
    int reps = 3, occlusion_reasoning = 0;
    float leaf = 0.005f, inlier = 0.005f, occl = 0.01f, rclutter = 0.03f, creg = 5.f, reg = 3.f, rnorm = 0.05f;
    for (int i = 4; i + 1 < argc; i += 2) {
        const char *k = argv[i];
        float v = std::atof(argv[i + 1]);
        if (!std::strcmp(k, "--reps")) reps = (int)v;
        else if (!std::strcmp(k, "--leaf")) leaf = v;
        else if (!std::strcmp(k, "--inlier")) inlier = v;
        else if (!std::strcmp(k, "--occlusion")) occl = v;
        else if (!std::strcmp(k, "--clutter-radius")) rclutter = v;
        else if (!std::strcmp(k, "--clutter-reg")) creg = v;
        else if (!std::strcmp(k, "--regularizer")) reg = v;
        else if (!std::strcmp(k, "--normals-radius")) rnorm = v;
        else if (!std::strcmp(k, "--occlusion-reasoning")) occlusion_reasoning = (int)v;
        else { std::fprintf(stderr, "unknown option %s\n", k); return 1; }
    }
    pcl::PointCloud<P>::Ptr model(new pcl::PointCloud<P>), scene(new pcl::PointCloud<P>), thin(new pcl::PointCloud<P>);
    if (pcl::io::loadPCDFile(argv[1], *model) < 0 || pcl::io::loadPCDFile(argv[2], *scene) < 0) return 1;
    // GHV's occupancy grid is sized from the scene's bounds, so its scene has no NaNs; occlusion is reasoned on
    // the organized original (PCL's organized filter, focal 525) as PCL's GHV tutorial does on a Kinect scene.
    pcl::PointCloud<P>::Ptr organized = scene;
    scene.reset(new pcl::PointCloud<P>);
    {
        pcl::Indices keep;
        pcl::removeNaNFromPointCloud(*organized, *scene, keep);
    }
    pcl::VoxelGrid<P> vg;
    vg.setInputCloud(model);
    vg.setLeafSize(leaf, leaf, leaf);
    vg.filter(*thin);
    std::vector<pcl::PointCloud<P>::ConstPtr> instances;
    std::ifstream in(argv[3]);
    for (;;) {
        Eigen::Matrix4f T;
        for (int i = 0; i < 16; ++i)
            if (!(in >> T(i / 4, i % 4))) goto done;
        pcl::PointCloud<P>::Ptr t(new pcl::PointCloud<P>);
        pcl::transformPointCloud(*thin, *t, T);
        instances.push_back(t);
    }
done:
    std::printf("model %zu pts (thinned %zu), scene %zu pts, %zu hypotheses\n", model->size(), thin->size(),
                scene->size(), instances.size());
    if (instances.empty()) {
        std::printf("no hypotheses\n");
        return 0;
    }
    std::vector<double> ms;
    std::vector<bool> mask;
    for (int r = 0; r < reps; ++r) {
        Ghv hv;
        hv.setSceneCloud(scene);
        if (organized->isOrganized())
            hv.setOcclusionCloud(organized);
        if (occlusion_reasoning)
            hv.addModels(instances, true);
        else
            hv.addModelsWithoutOcclusion(instances);
        hv.setResolution(leaf);
        hv.setResolutionOccupancyGrid(0.01f);
        hv.setInlierThreshold(inlier);
        hv.setOcclusionThreshold(occl);
        hv.setRegularizer(reg);
        hv.setRadiusClutter(rclutter);
        hv.setClutterRegularizer(creg);
        hv.setDetectClutter(true);
        hv.setRadiusNormals(rnorm);
        auto t0 = std::chrono::steady_clock::now();
        hv.verify();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        hv.getMask(mask);
    }
    std::sort(ms.begin(), ms.end());
    size_t acc = 0;
    std::printf("accepted:");
    for (size_t i = 0; i < mask.size(); ++i)
        if (mask[i]) { std::printf(" %zu", i); ++acc; }
    std::printf("\n%zu of %zu accepted; GHV verify median %.2f ms, min %.2f ms over %d reps\n", acc, mask.size(),
                ms[ms.size() / 2], ms[0], reps);
    return 0;
}
