// The console's entry: the query cache, the routes (all under /console; `/` opens the home
// page), and the stylesheet. One page per file in pages/.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { createBrowserRouter, Navigate, RouterProvider } from 'react-router';
import { queryClient } from './api.ts';
import { Layout } from './components/Layout.tsx';
import { Account } from './pages/Account.tsx';
import { AccessPage } from './pages/Access.tsx';
import { FramePage } from './pages/Frame.tsx';
import { Home } from './pages/Home.tsx';
import { OrgPage } from './pages/Org.tsx';
import { Orgs } from './pages/Orgs.tsx';
import { ProjectPage } from './pages/Project.tsx';
import { Projects } from './pages/Projects.tsx';
import { SpacePage } from './pages/Space.tsx';
import { SignIn, SignUp } from './pages/SignIn.tsx';
import { Team } from './pages/Team.tsx';
import { Teams } from './pages/Teams.tsx';
import './styles.css';

const router = createBrowserRouter([
  { path: '/', element: <Navigate to="/console" replace /> },
  { path: '/console/sign-in', element: <SignIn /> },
  { path: '/console/sign-up', element: <SignUp /> },
  {
    path: '/console',
    element: <Layout />,
    children: [
      { index: true, element: <Home /> },
      { path: 'account', element: <Account /> },
      { path: 'projects', element: <Projects /> },
      { path: 'projects/:projectId', element: <ProjectPage /> },
      { path: 'projects/:projectId/access', element: <AccessPage /> },
      { path: 'projects/:projectId/spaces/:spaceId', element: <SpacePage /> },
      { path: 'projects/:projectId/spaces/:spaceId/frames/:frameId', element: <FramePage /> },
      { path: 'teams', element: <Teams /> },
      { path: 'teams/:teamId', element: <Team /> },
      { path: 'orgs', element: <Orgs /> },
      { path: 'orgs/:orgId', element: <OrgPage /> },
      { path: '*', element: <h1>Page not found</h1> },
    ],
  },
]);

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </StrictMode>,
  );
