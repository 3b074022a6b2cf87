// The integration tests' hands on KDE Purpose: what an application's Share menu does, from the
// command line, through Purpose's own model and jobs (Tests/integration/service/test_kde_purpose.py).
//
//   purpose-driver list PLUGIN-TYPE INPUT-JSON           one JSON line per alternative offered
//   purpose-driver run PLUGIN-TYPE INPUT-JSON PLUGIN-ID  runs that alternative as a Share menu does
//                                                        (in Purpose's own process unless
//                                                        KDE_PURPOSE_LOCAL_JOBS is set); prints the
//                                                        job's result; exit 1 when it failed
//   purpose-driver menu PLUGIN-TYPE INPUT-JSON PNG       renders the Share menu (Purpose::Menu,
//                                                        the widget Okular and Gwenview show) to PNG;
//                                                        prints its entries' texts, "(no icon)" after
//                                                        one whose icon was not found
//
// INPUT-JSON is the input Purpose is given, e.g. {"urls": ["file:///tmp/a.png"], "mimeType": "image/png"}.

#include <QAction>
#include <QApplication>
#include <QIcon>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPixmap>
#include <QStandardPaths>
#include <QTextStream>
#include <QTimer>
#include <purpose/alternativesmodel.h>
#include <purpose/configuration.h>
#include <purpose/job.h>
#include <purposewidgets/menu.h>

namespace
{
void printLine(const QJsonObject &object)
{
    QTextStream(stdout) << QJsonDocument(object).toJson(QJsonDocument::Compact) << Qt::endl;
}

int fail(const QString &message)
{
    QTextStream(stderr) << "purpose-driver: " << message << Qt::endl;
    return 2;
}

int list(Purpose::AlternativesModel &model)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        const QModelIndex index = model.index(row);
        printLine({{QStringLiteral("id"), index.data(Purpose::AlternativesModel::PluginIdRole).toString()},
                   {QStringLiteral("name"), index.data(Qt::DisplayRole).toString()},
                   {QStringLiteral("action"), index.data(Purpose::AlternativesModel::ActionDisplayRole).toString()},
                   {QStringLiteral("icon"), index.data(Purpose::AlternativesModel::IconNameRole).toString()}});
    }
    return 0;
}

int run(QApplication &app, Purpose::AlternativesModel &model, const QString &pluginId)
{
    int row = -1;
    for (int candidate = 0; candidate < model.rowCount(); ++candidate) {
        if (model.index(candidate).data(Purpose::AlternativesModel::PluginIdRole).toString() == pluginId) {
            row = candidate;
        }
    }
    if (row < 0) {
        return fail(QStringLiteral("no alternative %1 for this input").arg(pluginId));
    }
    Purpose::Configuration *configuration = model.configureJob(row);
    if (!configuration->isReady()) {
        return fail(QStringLiteral("%1 needs configuring first").arg(pluginId));
    }
    Purpose::Job *job = configuration->createJob();
    if (!job) {
        return fail(QStringLiteral("%1 made no job").arg(pluginId));
    }
    int status = 0;
    QObject::connect(job, &KJob::result, &app, [&](KJob *finished) {
        const auto *purposeJob = static_cast<Purpose::Job *>(finished);
        printLine({{QStringLiteral("error"), finished->error()},
                   {QStringLiteral("errorText"), finished->errorText()},
                   {QStringLiteral("output"), purposeJob->output()}});
        status = finished->error() ? 1 : 0;
        app.quit();
    });
    QTimer::singleShot(0, job, &KJob::start);
    app.exec();
    return status;
}

int menu(Purpose::AlternativesModel &source, const QString &pngPath)
{
    // Off screen there is no desktop to name an icon theme and where themes are: KDE's own, in the
    // XDG data directories (Qt falls back to hicolor, where Ferry's icon is, without Breeze).
    if (QIcon::themeName().isEmpty()) {
        QStringList paths;
        for (const QString &directory : QStandardPaths::standardLocations(QStandardPaths::GenericDataLocation)) {
            paths << directory + QStringLiteral("/icons");
        }
        QIcon::setThemeSearchPaths(paths);
        QIcon::setThemeName(QStringLiteral("breeze"));
    }
    Purpose::Menu menu;
    menu.model()->setInputData(source.inputData());
    menu.model()->setPluginType(source.pluginType());
    menu.reload();
    QJsonArray entries;
    for (const QAction *action : menu.actions()) {
        entries.append(QString(action->text() + (action->icon().isNull() ? QStringLiteral(" (no icon)") : QString())));
    }
    printLine({{QStringLiteral("entries"), entries}});
    menu.adjustSize();
    return menu.grab().save(pngPath, "PNG") ? 0 : fail(QStringLiteral("could not write %1").arg(pngPath));
}
}

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    const QStringList arguments = app.arguments();
    if (arguments.size() < 4) {
        return fail(QStringLiteral("usage: purpose-driver list|run|menu PLUGIN-TYPE INPUT-JSON [PLUGIN-ID|PNG]"));
    }
    const QJsonDocument input = QJsonDocument::fromJson(arguments.at(3).toUtf8());
    if (!input.isObject()) {
        return fail(QStringLiteral("INPUT-JSON is not a JSON object"));
    }
    // The input first: the model loads its alternatives when the plugin type is set.
    Purpose::AlternativesModel model;
    model.setInputData(input.object());
    model.setPluginType(arguments.at(2));

    const QString command = arguments.at(1);
    if (command == QLatin1String("list")) {
        return list(model);
    }
    if (command == QLatin1String("run") && arguments.size() == 5) {
        return run(app, model, arguments.at(4));
    }
    if (command == QLatin1String("menu") && arguments.size() == 5) {
        return menu(model, arguments.at(4));
    }
    return fail(QStringLiteral("unknown command or wrong number of arguments"));
}
